/**
 * The key and name builders build flat strings with Array.prototype.join (src/store/objects.ts
 * flatKey) instead of template literals, to keep less memory per kept key. Their text must be
 * exactly what the template literals made: names reach Envoy and versions are hashed over them.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  clientCaBundleName,
  clusterName,
  hostnameChainName,
  httpsRouteConfigName,
  listenerQualifiedName,
  namedRuleName,
  routeMatchName,
} from '../../src/model/names';
import { flatKey, isNamespacedName, namespacedName, objectKey } from '../../src/store/objects';
import { rng } from '../support/rng';

const ALPHABET = ['', 'a', 'ns-1', 'route-12345', 'x.example.com', '*', '/', 'ü', 'HTTPRoute', '0'];

describe('flat keys (src/store/objects.ts flatKey)', () => {
  test('each builder gives the text of the template literal it replaced', () => {
    const next = rng(18);
    const part = () => {
      const n = 1 + Math.floor(next() * 3);
      let s = '';
      for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(next() * ALPHABET.length)];
      return s;
    };
    const int = () => Math.floor(next() * 70000);
    for (let i = 0; i < 2000; i++) {
      const [k, ns, name, x] = [part(), part(), part(), part()];
      const [a, b] = [int(), int()];
      assert.equal(objectKey(k, ns, name), `${k}/${ns}/${name}`);
      assert.equal(namespacedName(ns, name), `${ns}/${name}`);
      assert.equal(flatKey(k, a, ns, b, name), `${k}/${a}/${ns}/${b}/${name}`);
      assert.equal(httpsRouteConfigName(a, x), `https-${a}/${x}`);
      assert.equal(listenerQualifiedName({ kind: k, namespace: ns, name }, x), `${k}/${ns}/${name}/${x}`);
      assert.equal(hostnameChainName(`${k}/${ns}`, x), `${k}/${ns}/${x}`);
      assert.equal(clientCaBundleName(ns, name, a), `Gateway/${ns}/${name}/client-ca/${a}`);
      assert.equal(clientCaBundleName(ns, name, 'default'), `Gateway/${ns}/${name}/client-ca/default`);
      assert.equal(routeMatchName(k, ns, name, a, b), `${k}/${ns}/${name}/rule/${a}/match/${b}`);
      assert.equal(namedRuleName(k, ns, name, x), `${k}/${ns}/${name}/${x}`);
      assert.equal(clusterName(ns, name, a), `${ns}/${name}/${a}`);
      assert.equal(clusterName(ns, name, a, true), `${ns}/${name}/${a}/udp`);
    }
  });

  test('isNamespacedName answers as comparing with namespacedName, slashes in the parts included', () => {
    const next = rng(1818);
    const part = () => {
      const n = Math.floor(next() * 3);
      let s = '';
      for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(next() * ALPHABET.length)];
      return s;
    };
    let equal = 0;
    for (let i = 0; i < 20000; i++) {
      const [ns, name] = [part(), part()];
      // Half the keys are made from other parts, half from these parts split elsewhere.
      const key = next() < 0.5 ? namespacedName(part(), part()) : namespacedName(ns, name);
      const want = key === namespacedName(ns, name);
      if (want) equal++;
      assert.equal(isNamespacedName(key, ns, name), want, JSON.stringify([key, ns, name]));
    }
    assert.ok(equal > 5000 && equal < 15000, `both answers occur (${equal} equal)`);
  });

  test('a missing part reads "undefined", as in a template literal', () => {
    const missing = undefined as unknown as string;
    assert.equal(objectKey('Service', missing, 's'), 'Service/undefined/s');
    assert.equal(namespacedName(missing, 's'), 'undefined/s');
  });
});
