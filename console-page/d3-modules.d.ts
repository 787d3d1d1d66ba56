// The two d3 packages the flame graph needs ship no types; only what the page calls is declared.
declare module 'd3-flame-graph' {
  interface FlameGraphDatum {
    data: { name: string; value: number };
    value: number;
  }
  interface FlameGraph {
    (selection: unknown): void;
    width(value: number): FlameGraph;
    cellHeight(value: number): FlameGraph;
    minFrameSize(value: number): FlameGraph;
    selfValue(value: boolean): FlameGraph;
    sort(value: boolean): FlameGraph;
    transitionDuration(value: number): FlameGraph;
    title(value: string): FlameGraph;
    label(value: (d: FlameGraphDatum) => string): FlameGraph;
    setDetailsElement(element: HTMLElement | null): FlameGraph;
    inverted(value: boolean): FlameGraph;
    resetZoom(): void;
  }
  export default function flamegraph(): FlameGraph;
}

declare module 'd3-selection' {
  interface Selection {
    datum(value: unknown): Selection;
    call(fn: (selection: Selection) => void): Selection;
  }
  export function select(element: Element): Selection;
}
