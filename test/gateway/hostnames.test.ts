import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { hostnameMatches, intersectHostnames } from '../../src/gateway/hostnames';

describe('hostnameMatches', () => {
  const cases: [string | undefined, string, boolean][] = [
    [undefined, 'foo.example.com', true],
    ['', 'foo.example.com', true],
    ['foo.example.com', 'foo.example.com', true],
    ['FOO.example.com', 'foo.EXAMPLE.com', true],
    ['foo.example.com', 'bar.example.com', false],
    ['*.example.com', 'foo.example.com', true],
    ['*.example.com', 'a.b.example.com', true],
    ['*.example.com', 'example.com', false],
    ['*.example.com', 'fooexample.com', false],
    ['foo.example.com', '*.example.com', true],
    ['a.b.example.com', '*.example.com', true],
    ['example.com', '*.example.com', false],
    ['*.example.com', '*.example.com', true],
    ['*.example.com', '*.foo.example.com', true],
    ['*.foo.example.com', '*.example.com', true],
    ['*.example.com', '*.example.org', false],
    ['very.specific.com', '*.specific.com', true],
    ['foo.example.com', '', false],
  ];
  for (const [listener, route, want] of cases) {
    test(`${listener ?? '<none>'} vs ${route || '<empty>'} → ${want}`, () => {
      assert.equal(hostnameMatches(listener, route), want);
    });
  }
});

describe('intersectHostnames', () => {
  const cases: { listener?: string; route?: string[]; want: string[] }[] = [
    { listener: undefined, route: undefined, want: ['*'] },
    { listener: undefined, route: [], want: ['*'] },
    { listener: 'foo.example.com', route: undefined, want: ['foo.example.com'] },
    { listener: '*.example.com', route: undefined, want: ['*.example.com'] },
    { listener: undefined, route: ['b.com', 'a.com'], want: ['a.com', 'b.com'] },
    { listener: 'foo.example.com', route: ['foo.example.com', 'bar.example.com'], want: ['foo.example.com'] },
    { listener: 'foo.example.com', route: ['bar.example.com'], want: [] },
    { listener: '*.example.com', route: ['a.example.com', 'example.com', 'x.org'], want: ['a.example.com'] },
    { listener: 'very.specific.com', route: ['*.specific.com'], want: ['very.specific.com'] },
    { listener: '*.example.com', route: ['*.foo.example.com'], want: ['*.foo.example.com'] },
    { listener: '*.foo.example.com', route: ['*.example.com'], want: ['*.foo.example.com'] },
    { listener: '*.example.com', route: ['A.Example.com', 'a.example.com'], want: ['a.example.com'] },
    { listener: 'foo.example.com', route: ['*.example.com', 'foo.example.com'], want: ['foo.example.com'] },
  ];
  for (const c of cases) {
    test(`${c.listener ?? '<none>'} ∩ ${JSON.stringify(c.route)}`, () => {
      assert.deepEqual(intersectHostnames(c.listener, c.route), c.want);
    });
  }
});
