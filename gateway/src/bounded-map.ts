/**
 * A Map that forgets its oldest entry once it holds `limit` entries: per-replica memories on hot paths (sessions,
 * signals) stay bounded whatever clients send.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.limit) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
