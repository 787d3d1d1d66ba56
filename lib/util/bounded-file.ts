/**
 * Reading a small file that someone else controls, without trusting what is there: at most a
 * bound of bytes, from a regular file only, and only once its content is known to be one version.
 *
 * A path may hold anything: a 50 MB file, a named pipe (whose `open` blocks until a writer comes),
 * a symbolic link to `/dev/zero` (which never ends), a file being written. So a file is looked at
 * (`stat`, which follows symbolic links) before it is opened, and is refused unless it is a regular
 * file within the bound; it is then opened non-blocking (a pipe swapped in meanwhile cannot block
 * the open), checked again on the open descriptor (`fstat`), and read into a buffer one byte longer
 * than the size it had: a file that grew, shrank or was written while it was read is refused too.
 *
 * A file's identity is what tells, without reading it, that it is still the version read: device,
 * inode, size, and the modification and change times to the nanosecond. A Secret volume swaps a
 * symbolic link to a new directory of new files (a new inode); a file rewritten in place gets a new
 * change time, which no one can set back. Only a version whose times may still move within the file
 * system's clock grain is never taken as settled ({@link FileRead.settled}).
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type BigIntStats } from 'node:fs';
import { open, stat } from 'node:fs/promises';

/** A file's content, read whole and bounded, with the identity of the version read. */
export interface FileRead {
  /** The whole content. */
  readonly bytes: Buffer;
  /** Its identity ({@link fileIdentity}); another identity at the same path is another version. */
  readonly identity: string;
  /**
   * Whether the version's times are old enough that a write within the same tick of the file
   * system's clock is ruled out ({@link SETTLE_MS}); a version that is not may change without a new
   * identity, so it must be read again rather than trusted.
   */
  readonly settled: boolean;
}

/**
 * How old a file's last change must be for its identity to be trusted: a write in the same tick of
 * a coarse file-system clock (one second on ext3 and HFS+, two on FAT, a few milliseconds on most)
 * can leave the times as they were, and a file whose size did not change then looks unchanged.
 */
export const SETTLE_MS = 2000;

// Non-blocking, so that a named pipe put in place between the look and the open cannot hang the
// open (it is then refused by fstat), and without becoming the process's terminal. Both are 0
// where the platform has no such flag.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/** Device, inode, size, and modification and change times in nanoseconds: one version of a file. */
export function fileIdentity(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

/** The identity of `path` ({@link fileIdentity}), or `'-'` when it cannot be looked at (there is none). */
export async function identityOrNone(path: string): Promise<string> {
  try {
    return fileIdentity(await stat(path, { bigint: true }));
  } catch {
    return '-';
  }
}

/** What a file that is not a regular file is, as a message says it. */
function kindOf(stats: BigIntStats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'of an unknown kind';
}

/**
 * Why the file `path` (`what`, as messages name it: `the key file`) cannot be read as it stands:
 * not a regular file, or over `maxBytes` (`bound` names the option). Undefined when it can be.
 */
export function unfitReason(stats: BigIntStats, what: string, path: string, maxBytes: number, bound: string): string | undefined {
  if (!stats.isFile()) return `${what} ${path} is ${kindOf(stats)}, not a regular file`;
  if (stats.size > BigInt(maxBytes)) return `${what} ${path} is ${stats.size} bytes, over ${bound} (${maxBytes})`;
  return undefined;
}

/** Throws the reason when the file cannot be read as it stands ({@link unfitReason}). */
function refuseUnfit(stats: BigIntStats, what: string, path: string, maxBytes: number, bound: string): void {
  const reason = unfitReason(stats, what, path, maxBytes, bound);
  if (reason !== undefined) throw new Error(reason);
}

/**
 * The read, once the buffer (one byte longer than the size `before` said) holds `length` bytes
 * and `after` is the descriptor's stat at the end: refused when the file changed meanwhile.
 */
function finished(before: BigIntStats, after: BigIntStats, buffer: Buffer, length: number, what: string, path: string): FileRead {
  const identity = fileIdentity(before);
  if (BigInt(length) !== before.size || fileIdentity(after) !== identity) throw new Error(`${what} ${path} changed while it was read`);
  const changedMs = Number((before.mtimeNs > before.ctimeNs ? before.mtimeNs : before.ctimeNs) / 1_000_000n);
  return { bytes: buffer.subarray(0, length), identity, settled: Date.now() - changedMs >= SETTLE_MS };
}

/**
 * Reads the regular file `path` whole, at most `maxBytes` of it, with `fs.promises` only: the
 * event loop waits for no byte. Rejects (`what` naming the file: `the certificate file`) when it
 * is not a regular file, is larger than `maxBytes` (`bound` names the option), or changed while it
 * was read; with the file system's error when it cannot be opened. Reads at most its size plus one
 * byte, never over `maxBytes + 1`.
 */
export async function readBoundedFile(path: string, maxBytes: number, what: string, bound: string): Promise<FileRead> {
  refuseUnfit(await stat(path, { bigint: true }), what, path, maxBytes, bound);
  const handle = await open(path, READ_FLAGS);
  try {
    const before = await handle.stat({ bigint: true });
    refuseUnfit(before, what, path, maxBytes, bound);
    const buffer = Buffer.alloc(Number(before.size) + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buffer.length; length += n) {
      n = (await handle.read(buffer, length, buffer.length - length, length)).bytesRead;
    }
    return finished(before, await handle.stat({ bigint: true }), buffer, length, what, path);
  } finally {
    await handle.close();
  }
}

/**
 * {@link readBoundedFile}, synchronously: for a factory that checks its files at the call, before
 * it serves anything. The same checks and bounds: it cannot block on a pipe nor read without end.
 */
export function readBoundedFileSync(path: string, maxBytes: number, what: string, bound: string): FileRead {
  refuseUnfit(statSync(path, { bigint: true }), what, path, maxBytes, bound);
  const fd = openSync(path, READ_FLAGS);
  try {
    const before = fstatSync(fd, { bigint: true });
    refuseUnfit(before, what, path, maxBytes, bound);
    const buffer = Buffer.alloc(Number(before.size) + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buffer.length; length += n) n = readSync(fd, buffer, length, buffer.length - length, length);
    return finished(before, fstatSync(fd, { bigint: true }), buffer, length, what, path);
  } finally {
    closeSync(fd);
  }
}
