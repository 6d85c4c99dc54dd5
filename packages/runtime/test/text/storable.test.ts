import { sliceCodePoints, storableJson, storableText, wellFormed } from '../../src/text';

const GRINNING = '\u{1F600}'; // one character, two UTF-16 units (a surrogate pair)

describe('storable text', () => {
  it('cuts by characters, never inside a surrogate pair', () => {
    const text = `${'a'.repeat(4)}${GRINNING}b`;
    // String#slice would leave the pair's high half at the end.
    expect(text.slice(0, 5)).toBe(`aaaa\uD83D`);
    expect(sliceCodePoints(text, 5)).toBe(`aaaa${GRINNING}`);
    expect(sliceCodePoints(text, 4)).toBe('aaaa');
    expect(sliceCodePoints(text, 6)).toBe(text);
    expect(sliceCodePoints(GRINNING.repeat(3), 2)).toBe(GRINNING.repeat(2));
    // An unpaired surrogate counts as one character.
    expect(sliceCodePoints('\uD800\uD800x', 2)).toBe('\uD800\uD800');
  });

  it('replaces unpaired surrogates and keeps pairs', () => {
    expect(wellFormed(`a\uD800b\uDC00c${GRINNING}`)).toBe(`a\uFFFDb\uFFFDc${GRINNING}`);
    expect(wellFormed('\uDC00\uD800')).toBe('\uFFFD\uFFFD');
    const plain = 'nothing to do';
    expect(wellFormed(plain)).toBe(plain);
  });

  it('drops NUL, makes the rest well-formed and cuts by characters', () => {
    expect(storableText('tools\u0000call')).toBe('toolscall');
    expect(storableText('\u0000\uD800')).toBe('\uFFFD');
    // The cut comes after the NULs are gone, so it counts only what is stored.
    expect(storableText(`\u0000\u0000ab${GRINNING}c`, 3)).toBe(`ab${GRINNING}`);
    const text = `${'x'.repeat(499)}${GRINNING}`;
    expect(storableText(text, 500)).toBe(text);
  });

  it('makes every string of a JSON document storable, keys included, and keeps the rest', () => {
    const document = { 'na\u0000me': 'a\u0000b', list: ['\uD800', 1, true, null, { deep: `x\u0000${GRINNING}` }], n: 2.5 };
    expect(storableJson(document)).toEqual({ name: 'ab', list: ['\uFFFD', 1, true, null, { deep: `x${GRINNING}` }], n: 2.5 });
    expect(storableJson('plain')).toBe('plain');
    expect(storableJson(7)).toBe(7);
  });
});
