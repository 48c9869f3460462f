import type { TransportSocket } from '../../generated/envoy/config/core/v3/TransportSocket';
import type { UpstreamTlsContext } from '../../generated/envoy/extensions/transport_sockets/tls/v3/UpstreamTlsContext';
import type { CertificateValidationContext } from '../../generated/envoy/extensions/transport_sockets/tls/v3/CertificateValidationContext';
import type { UpstreamTlsModel } from '../../model/fleet';
import { Enum, ExtensionNames, ExtensionTypeUrl, adsConfigSource, typed } from './common';

/**
 * Builds the TLS transport socket of a cluster whose Service port a BackendTLSPolicy targets
 * (docs/gateway-api.md §24): SNI from the policy's hostname, the CA bundle inline and the subject
 * alternative names the backend certificate must carry.
 *
 * The CA is inline rather than a separate SDS resource: a policy's CA change then rewrites only
 * the clusters of the Service ports it targets, and a cluster never waits for a second resource
 * to warm (§24 gives the measurement). The Gateway's backend client certificate is an SDS
 * reference to the fleet's Secret of that name, fetched over ADS like listener certificates.
 */
export function upstreamTls(tls: UpstreamTlsModel, http2 = false): TransportSocket {
  const validation: CertificateValidationContext = {
    trusted_ca: { inline_string: tls.caBundle ?? '' },
    match_typed_subject_alt_names: tls.subjectAltNames.map((san) => ({
      san_type: san.type === 'URI' ? Enum.SanType.URI : Enum.SanType.DNS,
      matcher: { exact: san.value },
    })),
  };
  const ctx: UpstreamTlsContext = {
    sni: tls.sni,
    common_tls_context: {
      validation_context: validation,
      // HTTP/2 backends (gRPC, h2c appProtocol) speak h2 over TLS: offer it by ALPN.
      ...(http2 ? { alpn_protocols: ['h2'] } : {}),
      ...(tls.clientCertificate
        ? {
            tls_certificate_sds_secret_configs: [
              { name: tls.clientCertificate, sds_config: adsConfigSource() },
            ],
          }
        : {}),
    },
  };
  return {
    name: ExtensionNames.TlsTransportSocket,
    typed_config: typed<UpstreamTlsContext>(ExtensionTypeUrl.UpstreamTlsContext, ctx),
  };
}
