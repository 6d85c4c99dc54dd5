const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * Decodes standard base64 (padded or not) or base64url; undefined when the text is not well-formed.
 * Node's own decoder silently skips bad characters, which would turn a typo into a different key.
 */
export function decodeBase64Strict(text: string): Buffer | undefined {
  if (text.length === 0) return undefined;
  const standard = BASE64.test(text);
  if (!standard && !BASE64URL.test(text)) return undefined;
  const unpadded = text.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return undefined;
  if (standard && text.includes('=') && text.length % 4 !== 0) return undefined;
  return Buffer.from(unpadded, standard ? 'base64' : 'base64url');
}
