/**
 * The structure of a PDF too large to parse whole, read from its end as a PDF reader does:
 * `startxref`, each cross-reference section it leads to (a table or a cross-reference stream,
 * following /Prev and /XRefStm) with its trailer, the catalog the trailer's /Root names and the
 * page tree root the catalog's /Pages names, each at the offset the cross-reference gives (or in
 * the object stream it gives). Only those bytes are read, never the whole file. Names are compared
 * with their #xx escapes decoded, so `/Encr#79pt` is /Encrypt. The streams read (cross-reference
 * and object streams) count their bytes, as read and as inflated, against the budget given
 * (inspection.limits.pdfInflate).
 */
import { inflateSync, constants as zlib } from 'node:zlib';

export type ReadAt = (position: number, length: number) => Promise<Buffer>;

export type StructureVerdict =
  | { ok: true }
  | { ok: false; problem: 'encrypted' | 'empty' | 'inflate' | 'corrupt'; why?: string };

/**
 * What is read at first around an object (more while it is cut short), and at most for one (a
 * page tree root's long /Kids).
 */
const WINDOW = 4 * 1024;
const MAX_OBJECT_BYTES = 8 * 1024 * 1024;
/** Cross-reference sections followed at most (incremental updates), and subsections per table. */
const MAX_SECTIONS = 256;
const MAX_SUBSECTIONS = 10_000;
/** What is read at first for a table's subsection header (more when its trailer follows). */
const HEADER_WINDOW = 512;
const MAX_DEPTH = 64;

class Broken extends Error {}
/** The window ended inside a value: read more. */
class Truncated extends Error {}

class Name {
  constructor(readonly name: string) {}
}
class Ref {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
}
/** A string's content is not needed: every string is this one value. */
class PdfString {}
const STRING = new PdfString();
type Value = number | boolean | null | Name | Ref | Value[] | Dict | PdfString;
type Dict = Map<string, Value>;

const isSpace = (c: number) => c === 0 || c === 9 || c === 10 || c === 12 || c === 13 || c === 32;
const isDelimiter = (c: number) =>
  c === 0x28 ||
  c === 0x29 ||
  c === 0x3c ||
  c === 0x3e ||
  c === 0x5b ||
  c === 0x5d ||
  c === 0x7b ||
  c === 0x7d ||
  c === 0x2f ||
  c === 0x25;
const isRegular = (c: number) => !isSpace(c) && !isDelimiter(c);

/** A PDF name's bytes with #xx escapes decoded. */
const decodeName = (raw: string) =>
  raw.replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

/** Reads PDF values from a window of the file; positions are within the window. */
class Lexer {
  constructor(
    readonly buf: Buffer,
    public pos = 0,
    /** Whether the window ends at the end of the file (running out is then broken, not truncated). */
    readonly atEnd = false,
  ) {}

  private peek(offset = 0): number {
    const at = this.pos + offset;
    if (at >= this.buf.length) throw this.atEnd ? new Broken('it ends inside an object') : new Truncated();
    return this.buf[at] as number;
  }

  skipSpace(): void {
    for (;;) {
      if (this.pos >= this.buf.length) return;
      const c = this.buf[this.pos] as number;
      if (isSpace(c)) this.pos++;
      else if (c === 0x25) {
        while (this.pos < this.buf.length && this.buf[this.pos] !== 10 && this.buf[this.pos] !== 13)
          this.pos++;
      } else return;
    }
  }

  /** A run of regular characters (a keyword or a number), after any space. */
  word(): string {
    this.skipSpace();
    const start = this.pos;
    while (this.pos < this.buf.length && isRegular(this.buf[this.pos] as number)) this.pos++;
    if (this.pos >= this.buf.length && !this.atEnd) throw new Truncated();
    return this.buf.toString('latin1', start, this.pos);
  }

  /** A non-negative integer, or undefined (position unchanged) when none is next. */
  integer(): number | undefined {
    const at = this.pos;
    const w = this.word();
    if (/^\d{1,15}$/.test(w)) return Number(w);
    this.pos = at;
    return undefined;
  }

  expect(keyword: string, what: string): void {
    if (this.word() !== keyword) throw new Broken(what);
  }

  value(depth = 0): Value {
    if (depth > MAX_DEPTH) throw new Broken(`it nests objects more than ${MAX_DEPTH} deep`);
    this.skipSpace();
    const c = this.peek();
    if (c === 0x2f) {
      this.pos++;
      const start = this.pos;
      while (this.pos < this.buf.length && isRegular(this.buf[this.pos] as number)) this.pos++;
      if (this.pos >= this.buf.length && !this.atEnd) throw new Truncated();
      return new Name(decodeName(this.buf.toString('latin1', start, this.pos)));
    }
    if (c === 0x3c && this.peek(1) === 0x3c) return this.dict(depth);
    if (c === 0x3c) {
      while (this.peek() !== 0x3e) this.pos++;
      this.pos++;
      return STRING;
    }
    if (c === 0x28) return this.literal();
    if (c === 0x5b) {
      this.pos++;
      const items: Value[] = [];
      for (;;) {
        this.skipSpace();
        if (this.peek() === 0x5d) {
          this.pos++;
          return items;
        }
        items.push(this.value(depth + 1));
      }
    }
    const w = this.word();
    if (w === 'true' || w === 'false') return w === 'true';
    if (w === 'null') return null;
    if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(w))
      throw new Broken(`it holds ${w ? 'an unknown keyword' : 'a stray delimiter'} where a value belongs`);
    if (/^\d+$/.test(w)) {
      const after = this.pos;
      const gen = this.integer();
      if (gen !== undefined && this.word() === 'R') return new Ref(Number(w), gen);
      this.pos = after;
    }
    return Number(w);
  }

  dict(depth: number): Dict {
    this.pos += 2;
    const entries: Dict = new Map();
    for (;;) {
      this.skipSpace();
      if (this.peek() === 0x3e && this.peek(1) === 0x3e) {
        this.pos += 2;
        return entries;
      }
      const key = this.value(depth + 1);
      if (!(key instanceof Name)) throw new Broken('a dictionary holds a key that is not a name');
      entries.set(key.name, this.value(depth + 1));
    }
  }

  private literal(): PdfString {
    this.pos++;
    let open = 1;
    while (open > 0) {
      const c = this.peek();
      this.pos++;
      if (c === 0x5c) this.pos++;
      else if (c === 0x28) open++;
      else if (c === 0x29) open--;
    }
    return STRING;
  }
}

interface Entry {
  /** 1: at `offset`; 2: number `index` of object stream `stream`. */
  type: 1 | 2;
  offset: number;
  stream: number;
  index: number;
}

interface Section {
  trailer: Dict;
  /** The entry of object `num`: null when this section marks it free, undefined when it does not list it. */
  find(num: number): Promise<Entry | null | undefined>;
}

const num = (v: Value | undefined): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? v : undefined;
const nameOf = (v: Value | undefined): string | undefined => (v instanceof Name ? v.name : undefined);

export class PdfStructure {
  /** What is left of the inflation budget (what the check read and inflated is spent). */
  inflateLeft: number;
  private readonly sections: Section[] = [];

  constructor(
    private readonly readAt: ReadAt,
    private readonly size: number,
    inflateBudget: number,
    /** Bytes before `%PDF-` that the file's offsets do not count (junk a mail or print system prepended). */
    private readonly shift = 0,
  ) {
    this.inflateLeft = inflateBudget;
  }

  /** Parses one value at `offset`, reading more of the file while the window cuts it short. */
  private async parseAt<T>(
    offset: number,
    parse: (lex: Lexer) => T,
    window = WINDOW,
  ): Promise<{ value: T; end: number }> {
    for (let length = Math.min(window, MAX_OBJECT_BYTES); ; length = Math.min(length * 8, MAX_OBJECT_BYTES)) {
      const want = Math.min(length, this.size - offset);
      const buf = await this.readAt(offset, want);
      const lex = new Lexer(buf, 0, offset + buf.length >= this.size);
      try {
        const value = parse(lex);
        return { value, end: offset + lex.pos };
      } catch (err) {
        if (!(err instanceof Truncated)) throw err;
        if (offset + buf.length >= this.size || length >= MAX_OBJECT_BYTES) {
          throw new Broken(
            `an object at byte ${offset} is longer than ${MAX_OBJECT_BYTES / 1024 / 1024} MiB`,
          );
        }
      }
    }
  }

  /** An offset the file gives, as a position in the file. */
  private checkOffset(given: number | undefined, what: string): number {
    const offset = given === undefined ? undefined : given + this.shift;
    if (offset === undefined || !Number.isInteger(offset) || offset < 0 || offset >= this.size) {
      throw new Broken(`${what} points outside the file`);
    }
    return offset;
  }

  /** `num gen obj <value>` at `offset`; the stream's data position when a stream follows. */
  private async objectAt(offset: number, expected: number): Promise<{ value: Value; streamAt?: number }> {
    const { value } = await this.parseAt<{ value: Value; streamAt?: number }>(offset, (lex) => {
      const n = lex.integer();
      const g = lex.integer();
      if (n !== expected || g === undefined || lex.word() !== 'obj') {
        throw new Broken(`object ${expected} is not at the offset its cross-reference gives`);
      }
      const v = lex.value();
      if (lex.word() !== 'stream') return { value: v };
      // The data starts after the end of line that follows `stream` (CR LF or LF).
      let p = lex.pos;
      if (lex.buf[p] === 13) p++;
      if (lex.buf[p] === 10) p++;
      return { value: v, streamAt: offset + p };
    });
    return value;
  }

  /** A stream's data, decoded (FlateDecode and PNG predictors, as cross-reference and object streams use). */
  private async streamData(dict: Dict, at: number, depth: number): Promise<Buffer> {
    let length = dict.get('Length');
    if (length instanceof Ref) {
      if (depth > 0) throw new Broken('a stream length refers to another stream');
      length = await this.lookup(length, depth + 1);
    }
    const n = num(length);
    if (n === undefined || n < 0 || at + n > this.size)
      throw new Broken('a stream runs past the end of the file');
    // Counted against the inflation budget too: what is read of the file stays bounded.
    if (n > this.inflateLeft) throw new InflateLimit();
    this.inflateLeft -= n;
    const raw = await this.readAt(at, n);
    const filters = ([] as Value[]).concat(dict.get('Filter') ?? []);
    const parms = ([] as Value[]).concat(dict.get('DecodeParms') ?? []);
    if (filters.length === 0) return raw;
    if (filters.length > 1 || nameOf(filters[0]) !== 'FlateDecode') {
      throw new Broken('a cross-reference or object stream uses a filter other than FlateDecode');
    }
    let data: Buffer;
    try {
      data = inflateSync(raw, {
        maxOutputLength: Math.max(1, this.inflateLeft),
        finishFlush: zlib.Z_SYNC_FLUSH,
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
        throw new InflateLimit();
      }
      throw new Broken('a cross-reference or object stream does not inflate');
    }
    this.inflateLeft -= data.length;
    if (this.inflateLeft < 0) throw new InflateLimit();
    const p = parms[0];
    return p instanceof Map ? unpredict(data, p) : data;
  }

  /** The cross-reference section at `offset` (a table or a stream). */
  private async sectionAt(offset: number): Promise<Section> {
    const { value: isTable, end } = await this.parseAt(offset, (lex) => lex.word() === 'xref', HEADER_WINDOW);
    return isTable ? this.tableAt(end) : this.streamSectionAt(offset);
  }

  private async tableAt(start: number): Promise<Section> {
    const subsections: { first: number; count: number; at: number; width: number }[] = [];
    let pos = start;
    for (;;) {
      if (subsections.length > MAX_SUBSECTIONS)
        throw new Broken('its cross-reference table has too many subsections');
      const { value: header, end } = await this.parseAt(
        pos,
        (lex) => {
          const first = lex.integer();
          if (first === undefined) {
            lex.expect('trailer', 'its cross-reference table is not followed by a trailer');
            return { trailer: lex.value() };
          }
          const count = lex.integer();
          if (count === undefined)
            throw new Broken('its cross-reference table has a broken subsection header');
          return { first, count };
        },
        HEADER_WINDOW,
      );
      if ('trailer' in header) {
        if (!(header.trailer instanceof Map)) throw new Broken('its trailer is not a dictionary');
        const trailer = header.trailer;
        return {
          trailer,
          find: async (n) => {
            for (const s of subsections) {
              if (n < s.first || n >= s.first + s.count) continue;
              const line = (await this.readAt(s.at + (n - s.first) * s.width, 18)).toString('latin1');
              const m = /^(\d{10}) (\d{5}) ([nf])$/.exec(line);
              if (!m) throw new Broken(`its cross-reference entry of object ${n} is broken`);
              return m[3] === 'f' ? null : { type: 1, offset: Number(m[1]), stream: 0, index: 0 };
            }
            return undefined;
          },
        };
      }
      // Entries are 20 bytes (18 and a two-byte end of line); some writers end them with one byte.
      let at = end;
      const around = await this.readAt(at, 24);
      let skip = 0;
      while (skip < around.length && isSpace(around[skip] as number)) skip++;
      at += skip;
      let width = 20;
      if (header.count > 0) {
        const entry = around.subarray(skip, skip + 20);
        if (entry.length < 19 || !/^\d{10} \d{5} [nf]$/.test(entry.toString('latin1', 0, 18))) {
          throw new Broken('its cross-reference table has a broken entry');
        }
        const c19 = entry[19];
        if (c19 !== undefined && !isSpace(c19) && isSpace(entry[18] as number)) width = 19;
      }
      subsections.push({ first: header.first, count: header.count, at, width });
      pos = at + header.count * width;
      if (pos >= this.size) throw new Broken('its cross-reference table runs past the end of the file');
    }
  }

  private async streamSectionAt(offset: number): Promise<Section> {
    const { value: head } = await this.parseAt(offset, (lex) => {
      const n = lex.integer();
      lex.integer();
      lex.expect('obj', 'startxref does not point at a cross-reference table or stream');
      return n;
    });
    const { value: dict, streamAt } = await this.objectAt(offset, head as number);
    if (!(dict instanceof Map) || nameOf(dict.get('Type')) !== 'XRef' || streamAt === undefined) {
      throw new Broken('startxref does not point at a cross-reference table or stream');
    }
    const data = await this.streamData(dict, streamAt, 0);
    const w = dict.get('W');
    const widths = Array.isArray(w) ? w.map(num) : [];
    if (widths.length !== 3 || widths.some((x) => x === undefined || x < 0 || x > 8)) {
      throw new Broken('its cross-reference stream has no usable /W');
    }
    const [w0, w1, w2] = widths as [number, number, number];
    const row = w0 + w1 + w2;
    const index = dict.get('Index') ?? [0, num(dict.get('Size')) ?? 0];
    const bounds = Array.isArray(index) ? index.map(num) : [];
    if (bounds.length % 2 !== 0 || bounds.some((x) => x === undefined || x < 0)) {
      throw new Broken('its cross-reference stream has a broken /Index');
    }
    const field = (at: number, width: number, fallback: number) => {
      if (width === 0) return fallback;
      let v = 0;
      for (let i = 0; i < width; i++) v = v * 256 + (data[at + i] as number);
      return v;
    };
    return {
      trailer: dict,
      find: async (n) => {
        let rowIndex = 0;
        for (let i = 0; i < bounds.length; i += 2) {
          const first = bounds[i] as number;
          const count = bounds[i + 1] as number;
          if (n >= first && n < first + count) {
            const at = (rowIndex + n - first) * row;
            if (row === 0 || at + row > data.length)
              throw new Broken(`its cross-reference stream has no entry for object ${n}`);
            const type = field(at, w0, 1);
            if (type === 0) return null;
            const second = field(at + w0, w1, 0);
            const third = field(at + w0 + w1, w2, 0);
            if (type === 1) return { type: 1, offset: second, stream: 0, index: 0 };
            if (type === 2) return { type: 2, offset: 0, stream: second, index: third };
            return undefined;
          }
          rowIndex += count;
        }
        return undefined;
      },
    };
  }

  private async lookup(ref: Ref, depth = 0): Promise<Value> {
    for (const section of this.sections) {
      const entry = await section.find(ref.num);
      if (entry === null) break;
      if (entry === undefined) continue;
      if (entry.type === 1) {
        return (
          await this.objectAt(
            this.checkOffset(entry.offset, `object ${ref.num}'s cross-reference entry`),
            ref.num,
          )
        ).value;
      }
      return this.inObjectStream(entry.stream, ref.num, depth);
    }
    throw new Broken(`object ${ref.num} is not in its cross-reference`);
  }

  private async inObjectStream(streamNum: number, wanted: number, depth: number): Promise<Value> {
    if (depth > 0) throw new Broken('an object stream is itself in an object stream');
    let streamEntry: Entry | undefined;
    for (const section of this.sections) {
      const e = await section.find(streamNum);
      if (e === null) break;
      if (e) {
        streamEntry = e;
        break;
      }
    }
    if (streamEntry?.type !== 1) throw new Broken(`object stream ${streamNum} is not in its cross-reference`);
    const offset = this.checkOffset(streamEntry.offset, `object stream ${streamNum}`);
    const { value: dict, streamAt } = await this.objectAt(offset, streamNum);
    if (!(dict instanceof Map) || streamAt === undefined || nameOf(dict.get('Type')) !== 'ObjStm') {
      throw new Broken(`object ${streamNum} is not an object stream`);
    }
    const data = await this.streamData(dict, streamAt, depth);
    const n = num(dict.get('N'));
    const first = num(dict.get('First'));
    if (n === undefined || first === undefined || first > data.length)
      throw new Broken(`object stream ${streamNum} is broken`);
    const lex = new Lexer(data, 0, true);
    for (let i = 0; i < n; i++) {
      const objNum = lex.integer();
      const at = lex.integer();
      if (objNum === undefined || at === undefined) throw new Broken(`object stream ${streamNum} is broken`);
      if (objNum !== wanted) continue;
      const inner = new Lexer(data, first + at, true);
      return inner.value();
    }
    throw new Broken(`object ${wanted} is not in object stream ${streamNum}`);
  }

  async check(tail: Buffer): Promise<StructureVerdict> {
    try {
      const at = tail.lastIndexOf('startxref');
      const m = at === -1 ? null : /^startxref\s+(\d{1,15})/.exec(tail.toString('latin1', at, at + 40));
      if (!m) return corrupt('it has no startxref at its end');
      let offset: number | undefined = this.checkOffset(Number(m[1]), 'startxref');
      const seen = new Set<number>();
      while (offset !== undefined) {
        if (seen.has(offset) || seen.size >= MAX_SECTIONS) break;
        seen.add(offset);
        const section = await this.sectionAt(offset);
        this.sections.push(section);
        const hybrid = num(section.trailer.get('XRefStm'));
        const xrefStm = hybrid === undefined ? undefined : this.checkOffset(hybrid, '/XRefStm');
        if (xrefStm !== undefined && !seen.has(xrefStm)) {
          seen.add(xrefStm);
          this.sections.push(await this.streamSectionAt(xrefStm));
        }
        const prev = num(section.trailer.get('Prev'));
        offset = prev === undefined ? undefined : this.checkOffset(prev, '/Prev');
      }
      if (this.sections.some((s) => s.trailer.has('Encrypt'))) return { ok: false, problem: 'encrypted' };
      const rootRef = this.sections.map((s) => s.trailer.get('Root')).find((r) => r !== undefined);
      if (!(rootRef instanceof Ref)) return corrupt('its trailer names no catalog (/Root)');
      const catalog = await this.lookup(rootRef);
      if (!(catalog instanceof Map)) return corrupt('its catalog is not a dictionary');
      const pagesRef = catalog.get('Pages');
      if (!(pagesRef instanceof Ref)) return corrupt('its catalog does not lead to a list of pages');
      const pages = await this.lookup(pagesRef);
      if (!(pages instanceof Map) || nameOf(pages.get('Type')) !== 'Pages') {
        return corrupt('its catalog does not lead to a list of pages');
      }
      if (num(pages.get('Count')) === 0) return { ok: false, problem: 'empty' };
      return { ok: true };
    } catch (err) {
      if (err instanceof InflateLimit) return { ok: false, problem: 'inflate' };
      if (err instanceof Broken) return corrupt(err.message);
      throw err;
    }
  }
}

class InflateLimit extends Error {}

const corrupt = (why: string): StructureVerdict => ({ ok: false, problem: 'corrupt', why });

/** Undoes PNG predictors (DecodeParms /Predictor 10-15) on rows of /Columns bytes. */
function unpredict(data: Buffer, parms: Dict): Buffer {
  const predictor = num(parms.get('Predictor')) ?? 1;
  if (predictor === 1) return data;
  if (predictor < 10) throw new Broken('a cross-reference or object stream uses a TIFF predictor');
  const colors = num(parms.get('Colors')) ?? 1;
  const bits = num(parms.get('BitsPerComponent')) ?? 8;
  const columns = num(parms.get('Columns')) ?? 1;
  const bpp = Math.max(1, Math.ceil((colors * bits) / 8));
  const rowLength = Math.ceil((columns * colors * bits) / 8);
  if (rowLength <= 0 || rowLength > 1 << 20) throw new Broken('a stream has a broken /Columns');
  const rows = Math.floor(data.length / (rowLength + 1));
  const out = Buffer.alloc(rows * rowLength);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (rowLength + 1)] as number;
    const src = r * (rowLength + 1) + 1;
    const dst = r * rowLength;
    for (let i = 0; i < rowLength; i++) {
      const x = data[src + i] as number;
      const left = i >= bpp ? (out[dst + i - bpp] as number) : 0;
      const up = r > 0 ? (out[dst - rowLength + i] as number) : 0;
      const upLeft = r > 0 && i >= bpp ? (out[dst - rowLength + i - bpp] as number) : 0;
      let v: number;
      if (type === 0) v = x;
      else if (type === 1) v = x + left;
      else if (type === 2) v = x + up;
      else if (type === 3) v = x + ((left + up) >> 1);
      else if (type === 4) {
        const p = left + up - upLeft;
        const pa = Math.abs(p - left);
        const pb = Math.abs(p - up);
        const pc = Math.abs(p - upLeft);
        v = x + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft);
      } else throw new Broken('a stream has a broken PNG predictor row');
      out[dst + i] = v & 0xff;
    }
  }
  return out;
}
