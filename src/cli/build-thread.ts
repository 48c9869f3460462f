import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../observability/logger';
import type { TranslateOptions } from '../envoy/translate';
import { runBuildWorker, type BuildWorkerPort } from '../controller/build-worker-runner';
import type { BuildWorkerInit } from '../controller/build-worker-protocol';
import { accessLogForFleet, type AccessLogSettings } from './access-log-flags';
import { tracingForFleet, type TracingSettings } from './tracing-flags';
import type { ListenerLayout } from '../envoy/translate/sni-dispatch';

/**
 * The build thread of `convoy serve --build-thread worker` (docs/architecture.md §14): turns the
 * plain-data translate settings back into TranslateOptions (the access-log and tracing choosers
 * are functions, which do not cross threads) and runs the Controller.
 */

/** The translate settings as they cross to the build thread. */
export interface BuildThreadTranslate {
  bindAddress: string;
  accessLog?: AccessLogSettings;
  tracing?: TracingSettings;
  listenerLayout?: ListenerLayout;
  listenerLayoutThreshold?: number;
}

/** Returns the Controller's TranslateOptions for the settings. */
export function translateOptions(t: BuildThreadTranslate): TranslateOptions {
  return {
    bindAddress: t.bindAddress,
    ...(t.accessLog ? { accessLog: accessLogForFleet(t.accessLog) } : {}),
    ...(t.tracing ? { tracing: tracingForFleet(t.tracing) } : {}),
    ...(t.listenerLayout ? { listenerLayout: t.listenerLayout } : {}),
    ...(t.listenerLayoutThreshold ? { listenerLayoutThreshold: t.listenerLayoutThreshold } : {}),
  };
}

if (parentPort) {
  const init = workerData as BuildWorkerInit;
  const logger = createLogger({ level: init.logLevel }).child({ thread: 'build' });
  runBuildWorker(
    parentPort as unknown as BuildWorkerPort,
    init,
    translateOptions(init.translate as BuildThreadTranslate),
    logger,
  );
}
