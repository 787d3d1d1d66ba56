import { createIntrospectionState, type IntrospectionStateOptions } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';

/** A chain `{a:{a:…{leaf:1}}}` of the given depth. */
export function deepChain(depth: number): Record<string, unknown> {
  let node: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < depth; i++) node = { a: node };
  return node;
}

/**
 * A state shaped like a real controller's: templates with dotted names, watched resources, events,
 * resource counts, auxiliary files, plus custom variables with awkward keys and shapes.
 */
export function populatedState(options: IntrospectionStateOptions = {}, deepLevels = 1000): IntrospectionState {
  const state = createIntrospectionState(options);
  state.setConfig(
    {
      templates: {
        'haproxy.cfg': 'global\n  maxconn 4096\nfrontend http\n  bind :80\n',
        'maps/host.map': 'example.com backend_a\n',
        'tricky[0].cfg': 'x',
      },
      watched_resources: [
        { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', namespaces: ['default', 'web'] },
        { group: '', version: 'v1', kind: 'Service', selector: { app: 'web', tier: 'front' } },
        { group: '', version: 'v1', kind: 'Endpoints', enabled: false, weight: 2.5 },
      ],
      controller: { debugPort: 8080, metrics_port: 9090, replicas: 3 },
    },
    'v42',
  );
  state.setRendered('global\n  maxconn 4096\nbackend b\n  server s1 10.0.0.1:80\n');
  state.setAuxFiles({
    ssl_certificates: [{ name: 'site.pem', path: '/etc/haproxy/ssl/site.pem', content: 'cert' }],
    map_files: [{ name: 'host.map', path: '/etc/haproxy/maps/host.map', content: 'a b\n' }],
    general_files: [],
  });
  state.setCredentials({ haproxy: { username: 'admin', password: 'fixture-password' }, registry_token: 'fixture-token' }, 'c1');
  state.setResourceCounts({ ingresses: 3, services: 5, endpoints: 7, 'lb-pods': 2 });
  for (let i = 0; i < 30; i++)
    state.publishEvent(i % 2 ? 'reconciliation.triggered' : 'config.validated', i % 3 ? undefined : `cycle ${i}`);
  // Keys that mean something to JavaScript or to JSONPath, held as the data's own properties.
  state.publishVar('weird', () =>
    JSON.parse(
      '{"__proto__":{"polluted":"via __proto__"},"constructor":{"prototype":{"polluted":"via constructor"}},' +
        '"prototype":1,"a.b":{"c":[1,2,3]},"[0]":"bracket","":"empty key","sp ace":true,"quo\\"te":"q",' +
        '"uni\\u00e9":"é","emoji😀":"😀","nul\\u0000key":"nul","nested":{"x":{"y":{"z":[{"k":null},{"k":0},{"k":"s"}]}}},' +
        '"numbers":[0,-1,1.5,1e21,-0,9007199254740993],"mixed":[1,"1",true,null,{},[]]}',
    ),
  );
  state.publishVar('items', () => ({
    items: Array.from({ length: 300 }, (_, i) => ({ id: i, name: `item-${i}`, ok: i % 2 === 0, tags: ['a', 'b'] })),
  }));
  const deep = deepChain(deepLevels);
  state.publishVar('deep', () => deep);
  return state;
}
