import type { Secret } from '../../generated/envoy/extensions/transport_sockets/tls/v3/Secret';
import type { DownstreamTlsContext } from '../../generated/envoy/extensions/transport_sockets/tls/v3/DownstreamTlsContext';
import type { CommonTlsContext } from '../../generated/envoy/extensions/transport_sockets/tls/v3/CommonTlsContext';
import type { CaBundleModel, ClientValidationModel } from '../../model/fleet';
import { adsConfigSource, memoByNode } from './common';

/**
 * Translates client certificate validation (Gateway spec.tls.frontend, docs/gateway-api.md §25)
 * into Envoy's terms.
 *
 * The CA bundle is its own SDS Secret (a validation context) that chains name, like their
 * certificates: a change of the ConfigMap updates that Secret only and drains no connection.
 * - AllowValidOnly: `require_client_certificate`, and the validation context from SDS; a client
 *   without a certificate that leads to the bundle fails the handshake.
 * - AllowInsecureFallback: the certificate is requested but not required, and the SDS context is
 *   combined with `trust_chain_verification: ACCEPT_UNTRUSTED`, so a client without a certificate or
 *   with one that does not verify is accepted too. The bundle Secret stays the same in both modes.
 */

/** Translates a CaBundleModel to the SDS Secret of a validation context trusting its certificates. */
export const translateCaBundle = memoByNode((model: CaBundleModel): Secret => ({
  name: model.name,
  validation_context: { trusted_ca: { inline_string: model.caCertificates } },
}));

/** Returns `common` with the validation context of `validation`, and the context's require flag. */
export function withClientValidation(
  common: CommonTlsContext,
  validation: ClientValidationModel,
): Pick<DownstreamTlsContext, 'common_tls_context' | 'require_client_certificate'> {
  const sds = { name: validation.caBundle, sds_config: adsConfigSource() };
  if (validation.mode === 'AllowValidOnly') {
    return {
      common_tls_context: { ...common, validation_context_sds_secret_config: sds },
      require_client_certificate: { value: true },
    };
  }
  return {
    // Explicit: Envoy warns that the implicit default (not required) will change.
    require_client_certificate: { value: false },
    common_tls_context: {
      ...common,
      combined_validation_context: {
        default_validation_context: { trust_chain_verification: 'ACCEPT_UNTRUSTED' },
        validation_context_sds_secret_config: sds,
      },
    },
  };
}
