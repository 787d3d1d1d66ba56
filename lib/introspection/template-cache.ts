/**
 * A small least-recently-used cache of compiled `?field=` templates. Dashboards and scripts repeat
 * the same few templates, so parsing is paid once per template rather than once per request.
 * Compile errors are not cached: they are cheap to produce again and must not crowd out good ones.
 */
export class TemplateCache<T> {
  private readonly entries = new Map<string, T>();

  constructor(
    private readonly capacity: number,
    private readonly compile: (source: string) => T,
  ) {}

  get(source: string): T {
    const hit = this.entries.get(source);
    if (hit !== undefined) {
      // Re-insert so the Map's insertion order doubles as recency order.
      this.entries.delete(source);
      this.entries.set(source, hit);
      return hit;
    }
    const compiled = this.compile(source);
    this.entries.set(source, compiled);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return compiled;
  }
}
