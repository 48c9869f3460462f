import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateObject } from '../../src/validation';
import { admitEntry } from '../../src/providers/files/apiserver';
import { xListenerSet } from '../support/objects';

test('file mode validates XListenerSets like the legacy CRD: a port may be left out or 0', () => {
  const ok = xListenerSet('x', { name: 'gw' }, [
    { name: 'a', protocol: 'HTTP' },
    { name: 'b', protocol: 'HTTP', port: 0, hostname: 'b.example.com' },
    { name: 'c', protocol: 'HTTP', port: 8080 },
  ]);
  assert.deepEqual(validateObject(ok), []);
  const bad = xListenerSet('x', { name: 'gw' }, [
    { name: 'a', protocol: 'HTTP', port: 70000 },
    { name: 'a', protocol: 'HTTP', port: 8080 },
  ]);
  const errors = validateObject(bad);
  assert.ok(
    errors.some((e) => e.startsWith('spec.listeners[0].port')),
    errors.join('\n'),
  );
  assert.ok(
    errors.some((e) => e.includes('Listener name must be unique')),
    errors.join('\n'),
  );
  // Two listeners left without a port with the same protocol and hostname: both default to 0.
  const twoZero = xListenerSet('x', { name: 'gw' }, [
    { name: 'a', protocol: 'HTTP' },
    { name: 'b', protocol: 'HTTP' },
  ]);
  assert.ok(validateObject(twoZero).some((e) => e.includes('Combination of port, protocol and hostname')));
});

test('only gateway.networking.x-k8s.io/v1alpha1 is an XListenerSet', () => {
  const wrongVersion = { ...xListenerSet('x', { name: 'gw' }, [{ name: 'a', protocol: 'HTTP' }]) };
  wrongVersion.apiVersion = 'gateway.networking.x-k8s.io/v1';
  assert.ok(validateObject(wrongVersion).some((e) => e.startsWith('apiVersion: Unsupported value')));
  const otherGroup = { ...wrongVersion, apiVersion: 'gateway.networking.k8s.io/v1' };
  assert.equal(admitEntry({ value: otherGroup } as Parameters<typeof admitEntry>[0]).kind, 'ignored');
  const good = xListenerSet('x', { name: 'gw' }, [{ name: 'a', protocol: 'HTTP' }]);
  assert.equal(admitEntry({ value: good } as Parameters<typeof admitEntry>[0]).kind, 'ok');
});
