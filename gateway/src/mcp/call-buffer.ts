/**
 * A FIFO bounded by item count and by (estimated) bytes that makes room by dropping its oldest items. Taking
 * from the front advances an index (no shifting), so a full buffer under load costs O(1) per item.
 */
export class DropOldestBuffer<T> {
  private items: Array<T | undefined> = [];
  private head = 0;
  private heldBytes = 0;

  constructor(
    private readonly limits: { maxItems: number; maxBytes: number },
    private readonly sizeOf: (item: T) => number,
  ) {}

  get length(): number {
    return this.items.length - this.head;
  }

  /** The estimated bytes held. */
  get bytes(): number {
    return this.heldBytes;
  }

  /** Appends an item; returns how many of the oldest were dropped to stay within the limits. */
  push(item: T): number {
    this.items.push(item);
    this.heldBytes += this.sizeOf(item);
    return this.trim();
  }

  /** Removes and returns up to `maxItems` from the front, stopping before `maxBytes` (but always at least one). */
  take(maxItems: number, maxBytes: number): T[] {
    const taken: T[] = [];
    let bytes = 0;
    while (this.length > 0 && taken.length < maxItems) {
      const item = this.items[this.head]!;
      const size = this.sizeOf(item);
      if (taken.length > 0 && bytes + size > maxBytes) break;
      taken.push(item);
      bytes += size;
      this.dropFront();
    }
    this.compact();
    return taken;
  }

  /** Puts items back at the front in their order (a batch that could not be sent); returns how many were dropped. */
  unshift(items: T[]): number {
    this.items = [...items, ...this.items.slice(this.head)];
    this.head = 0;
    for (const item of items) this.heldBytes += this.sizeOf(item);
    return this.trim();
  }

  /** Empties the buffer; returns how many items it held. */
  clear(): number {
    const count = this.length;
    this.items = [];
    this.head = 0;
    this.heldBytes = 0;
    return count;
  }

  private trim(): number {
    let dropped = 0;
    while (this.length > 0 && (this.length > this.limits.maxItems || this.heldBytes > this.limits.maxBytes)) {
      this.dropFront();
      dropped += 1;
    }
    if (dropped > 0) this.compact();
    return dropped;
  }

  private dropFront(): void {
    this.heldBytes -= this.sizeOf(this.items[this.head]!);
    // Release the reference so a dropped record can be collected before the next compaction.
    this.items[this.head] = undefined;
    this.head += 1;
  }

  /** Reclaims the consumed front once it is at least half the array. */
  private compact(): void {
    if (this.head === 0 || this.head * 2 < this.items.length) return;
    this.items = this.items.slice(this.head);
    this.head = 0;
  }
}
