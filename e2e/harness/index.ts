/** Real-process e2e harness: Envoy, echo backends, convoy serve, HTTP(S) requests, test PKI. */
export * from './util';
export * from './ports';
export * from './envoy';
export * from './backend';
export * from './http';
export * from './certs';
export * from './convoy';
export * from './xds-resources';
export * from './load';
export * from './stalling-proxy';
export * from './ads-clients';
export * from './l4-backends';
