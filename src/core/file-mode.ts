/** A file's permission bits (mode & 0o7777) as four octal digits, as chmod takes them: `0600`, `2770`. */
export const octalMode = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');
