/** The If-Match header for a revision. */
export const ifMatch = (revision: number): Record<string, string> => ({ 'if-match': `"${revision}"` });
