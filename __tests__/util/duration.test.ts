import { formatGoDuration, formatRoundedDuration } from '../../lib/util/duration';

describe('formatGoDuration: Go time.Duration.String to the millisecond', () => {
  test.each([
    [0, '0s'],
    [-5, '0s'],
    [1, '1ms'],
    [850, '850ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [1234, '1.234s'],
    [60_000, '1m0s'],
    [200_000, '3m20s'],
    [3_723_500, '1h2m3.5s'],
    [3_600_000, '1h0m0s'],
    [90_061_001, '25h1m1.001s'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatGoDuration(ms)).toBe(text);
  });
});

describe('formatRoundedDuration: the same, rounded for a person reading a probe', () => {
  test.each([
    [850.4, '850ms'],
    [1234, '1.2s'],
    [1250, '1.3s'],
    [59_960, '1m0s'],
    [200_400, '3m20s'],
    [5_400_000, '1h30m0s'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatRoundedDuration(ms)).toBe(text);
  });
});
