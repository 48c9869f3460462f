/**
 * The Gateway API kinds file mode validates, each with its served versions, its CRD file and its
 * hand-written `spec` schema. The schemas are transcribed from the v1.6.1 standard-channel
 * CRDs (config/crd/standard/gateway.networking.k8s.io_*.yaml), one file per CRD in this folder,
 * with every x-kubernetes-validations rule ported to TypeScript: each rule's message is the CRD's
 * message, verbatim, and the CEL expression it implements is quoted in a comment (shortened where
 * it repeats). test/validation/crd-parity.test.ts compares them with the real CRDs whenever they
 * are available locally, so drift is caught.
 */
import type { SchemaNode } from '../schema';
import { gatewaySpec } from './gateway';
import { gatewayClassSpec } from './gatewayclass';
import { grpcRouteSpec } from './grpcroute';
import { httpRouteSpec } from './httproute';
import { listenerSetSpec } from './listenerset';
import { referenceGrantSpec } from './referencegrant';
import { backendTLSPolicySpec } from './backendtlspolicy';
import { tlsRouteSpec } from './tlsroute';
import { l4RouteSpec } from './l4route';

export interface GatewayKindSchema {
  /** Served versions of gateway.networking.k8s.io for this kind (standard channel, v1.6.1). */
  versions: string[];
  /** CRD file in config/crd/standard/ (used by the parity test). */
  crdFile: string;
  spec: SchemaNode;
}

export const GATEWAY_KIND_SCHEMAS: Record<string, GatewayKindSchema> = {
  GatewayClass: {
    versions: ['v1', 'v1beta1'],
    crdFile: 'gateway.networking.k8s.io_gatewayclasses.yaml',
    spec: gatewayClassSpec,
  },
  Gateway: {
    versions: ['v1', 'v1beta1'],
    crdFile: 'gateway.networking.k8s.io_gateways.yaml',
    spec: gatewaySpec,
  },
  ListenerSet: {
    versions: ['v1'],
    crdFile: 'gateway.networking.k8s.io_listenersets.yaml',
    spec: listenerSetSpec,
  },
  HTTPRoute: {
    versions: ['v1', 'v1beta1'],
    crdFile: 'gateway.networking.k8s.io_httproutes.yaml',
    spec: httpRouteSpec,
  },
  GRPCRoute: { versions: ['v1'], crdFile: 'gateway.networking.k8s.io_grpcroutes.yaml', spec: grpcRouteSpec },
  TLSRoute: { versions: ['v1'], crdFile: 'gateway.networking.k8s.io_tlsroutes.yaml', spec: tlsRouteSpec },
  TCPRoute: { versions: ['v1'], crdFile: 'gateway.networking.k8s.io_tcproutes.yaml', spec: l4RouteSpec },
  UDPRoute: { versions: ['v1'], crdFile: 'gateway.networking.k8s.io_udproutes.yaml', spec: l4RouteSpec },
  ReferenceGrant: {
    versions: ['v1', 'v1beta1'],
    crdFile: 'gateway.networking.k8s.io_referencegrants.yaml',
    spec: referenceGrantSpec,
  },
  BackendTLSPolicy: {
    versions: ['v1'],
    crdFile: 'gateway.networking.k8s.io_backendtlspolicies.yaml',
    spec: backendTLSPolicySpec,
  },
};
