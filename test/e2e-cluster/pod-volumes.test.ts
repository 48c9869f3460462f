import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mountScript, volumeFiles } from '../../e2e/cluster/pod-volumes';

const sources = {
  configMap: (n: string) => (n === 'cm' ? { Corefile: '. {}', other: 'x' } : undefined),
  secret: (n: string) => (n === 'tls' ? { 'tls.crt': 'CRT', 'tls.key': 'KEY' } : undefined),
};

test('volumeFiles projects every key, or only the listed items under their paths; a missing required source throws', () => {
  assert.deepEqual(
    [...(volumeFiles({ name: 'v', configMap: { name: 'cm' } }, sources) as Map<string, string>)],
    [
      ['Corefile', '. {}'],
      ['other', 'x'],
    ],
  );
  const items = volumeFiles(
    {
      name: 'v',
      secret: {
        secretName: 'tls',
        items: [
          { key: 'tls.crt', path: 'crt' },
          { key: 'tls.key', path: 'sub/key' },
        ],
      },
    },
    sources,
  ) as Map<string, string>;
  assert.deepEqual(
    [...items],
    [
      ['crt', 'CRT'],
      ['sub/key', 'KEY'],
    ],
  );
  assert.equal(volumeFiles({ name: 'v', emptyDir: {} }, sources), 'dir');
  assert.equal(volumeFiles({ name: 'v' }, sources), undefined);
  assert.deepEqual(
    [
      ...(volumeFiles({ name: 'v', secret: { secretName: 'gone', optional: true } }, sources) as Map<
        string,
        string
      >),
    ],
    [],
  );
  assert.throws(
    () => volumeFiles({ name: 'v', secret: { secretName: 'gone' } }, sources),
    /secret "gone" not found/,
  );
  assert.throws(
    () =>
      volumeFiles(
        { name: 'v', configMap: { name: 'cm', items: [{ key: 'Corefile', path: '../x' }] } },
        sources,
      ),
    /escapes/,
  );
});

test('mountScript overlays the nearest existing ancestor of a missing mountPath once, then binds; read-only is remounted', () => {
  const existing = new Set(['/', '/etc', '/root', '/root/existing']);
  const script = mountScript({
    volumeDirs: new Map([
      ['a', '/pods/p/volumes/a'],
      ['b', '/pods/p/volumes/b'],
      ['c', '/pods/p/volumes/c'],
    ]),
    mounts: [
      { name: 'a', mountPath: '/etc/secret-volume' },
      { name: 'b', mountPath: '/etc/envoy/', readOnly: true },
      { name: 'c', mountPath: '/root/existing' },
      { name: 'unknown', mountPath: '/etc/ignored' },
    ],
    scratch: '/pods/p/overlay/main',
    exists: (p) => existing.has(p),
    isFile: () => false,
  });
  assert.deepEqual(script.split('\n'), [
    "mkdir -p '/pods/p/overlay/main/overlay-0/upper' '/pods/p/overlay/main/overlay-0/work'",
    "mount -t overlay convoy-pod -o 'lowerdir=/etc,upperdir=/pods/p/overlay/main/overlay-0/upper,workdir=/pods/p/overlay/main/overlay-0/work' '/etc'",
    "mkdir -p '/etc/secret-volume'",
    "mount --bind '/pods/p/volumes/a' '/etc/secret-volume'",
    "mkdir -p '/etc/envoy'",
    "mount --bind '/pods/p/volumes/b' '/etc/envoy'",
    "mount -o remount,bind,ro '/etc/envoy'",
    "mkdir -p '/root/existing'",
    "mount --bind '/pods/p/volumes/c' '/root/existing'",
  ]);
  assert.throws(
    () =>
      mountScript({
        volumeDirs: new Map([['a', '/v']]),
        mounts: [{ name: 'a', mountPath: '/brand-new/dir' }],
        scratch: '/s',
        exists: (p) => existing.has(p),
        isFile: () => false,
      }),
    /top-level directory/,
  );
});
