/**
 * Lets long conversion loops share the event loop: awaiting `tick()` on every iteration yields to
 * other work every `every` iterations and costs nothing in between.
 */
export function cooperativeTicker(every = 20_000): () => Promise<void> | undefined {
  let count = 0;
  return function tick(): Promise<void> | undefined {
    count += 1;
    if (count % every !== 0) return undefined;
    return new Promise((resolve) => setImmediate(resolve));
  };
}
