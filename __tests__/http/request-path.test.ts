/** reviewedPath: the one reading of a request's path that createKubeAuth reviews. */
import { EXACT_ROUTING, fold, reviewedPath } from '../../lib/http/request-path';

describe('reviewedPath', () => {
  it.each([
    ['/metrics', '/metrics', ['/metrics']],
    ['/debug/vars/config?field={.a}#', undefined, undefined],
    ['/debug/vars?x=%zz', '/debug/vars', ['/debug/vars']],
    ['/debug/pprof/', '/debug/pprof/', ['/debug/pprof/', '/debug/pprof']],
    ['/Debug/Vars/leaderElection', '/Debug/Vars/leaderElection', ['/Debug/Vars/leaderElection', '/debug/vars/leaderelection']],
    ['/debug/vars/a%20b', '/debug/vars/a b', ['/debug/vars/a b']],
    ['/debug/vars/%2563', '/debug/vars/%63', ['/debug/vars/%63']],
    ['/debug/vars/%C3%A9', '/debug/vars/é', ['/debug/vars/é']],
    ['/', '/', ['/']],
  ])('reads %s as %s', (target, path, spellings) => {
    const read = reviewedPath(target);
    if (path === undefined) expect(read).toEqual({ refused: expect.stringMatching(/fragment/) });
    else expect(read).toEqual({ path, spellings });
  });

  it.each([
    ['http://host/debug/vars', /absolute-form/],
    ['HTTPS://host:1/x', /absolute-form/],
    ['*', /absolute-form/],
    ['debug/vars', /absolute-form/],
    ['/debug/vars#', /fragment/],
    ['/debug/vars?x#y', /fragment/],
    ['/debug/./vars', /dot segment/],
    ['/debug/vars/..', /dot segment/],
    ['/debug/vars/.', /dot segment/],
    ['//debug/vars', /empty or dot segment/],
    ['/debug/vars//', /empty or dot segment/],
    ['/debug\\vars', /characters/],
    ['/debug/vars/a b', /characters/],
    ['/debug/vars/\t', /characters/],
    ['/debug/vars/é', /characters/],
    ['/debug/vars/"x"', /characters/],
    ['/debug/%76ars', /escapes "v" \(%76\)/],
    ['/debug/vars/%7e', /escapes "~"/],
    ['/debug/vars/%2E%2E', /escapes "\."/],
    ['/debug/vars/%2f', /escapes "\/"/],
    ['/debug/vars/%5C', /escapes "\\\\"/],
    ['/debug/vars/%0a', /control character/],
    ['/debug/vars/%7F', /control character/],
    ['/debug/vars/%', /invalid percent-escape "%"/],
    ['/debug/vars/%4', /invalid percent-escape "%4"/],
    ['/debug/vars/%g0', /invalid percent-escape "%g0"/],
    ['/debug/vars/%C3', /does not decode to UTF-8/],
    ['/debug/vars/%ED%A0%80', /does not decode to UTF-8/],
  ])('refuses %s', (target, message) => {
    const read = reviewedPath(target);
    expect('refused' in read && read.refused).toMatch(message);
  });

  it('echoes at most 128 characters of a refused target', () => {
    const read = reviewedPath(`/${'a'.repeat(10_000)}#`);
    expect('refused' in read && read.refused.length).toBeLessThan(200);
  });

  it('folds to lower case without a trailing slash, the root kept', () => {
    expect([fold('/'), fold('/A/'), fold('/Debug/PPROF/'), fold('/x')]).toEqual(['/', '/a', '/debug/pprof', '/x']);
  });

  it('gives the routers exact routing, frozen', () => {
    expect(EXACT_ROUTING).toEqual({ caseSensitive: true, strict: true });
    expect(Object.isFrozen(EXACT_ROUTING)).toBe(true);
  });
});
