// Browsers have no setImmediate; the converters yield with it between slices of work. A message
// channel runs the callback as soon as the event loop is free, without setTimeout's 4 ms clamp.
const channel = new MessageChannel();
const queue: Array<() => void> = [];
channel.port1.onmessage = () => queue.shift()?.();

function setImmediateShim(callback: () => void): void {
  queue.push(callback);
  channel.port2.postMessage(null);
}

export { setImmediateShim as setImmediate };
