type Callback<T> = (err: Error | null, value?: T) => void;

/** `node:util`'s `promisify`, for callback-last functions. */
export function promisify<A extends unknown[], T>(fn: (...args: [...A, Callback<T>]) => void): (...args: A) => Promise<T> {
  return (...args: A) => new Promise<T>((resolve, reject) => fn(...args, (err, value) => (err ? reject(err) : resolve(value as T))));
}
