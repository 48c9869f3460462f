import type { BenchArgs, Results, Server } from './run';

export async function runNetworkMeasurements(
  _server: Server,
  _args: BenchArgs,
  _results: Results,
): Promise<void> {
  throw new Error('not implemented yet');
}
