import type { BenchArgs, Results, Server } from './run';

export async function measureRealEnvoy(
  _server: Server,
  _address: string,
  _args: BenchArgs,
  _results: Results,
): Promise<void> {
  throw new Error('not implemented yet');
}
