import type { Secret } from '../../generated/envoy/extensions/transport_sockets/tls/v3/Secret';
import type { SecretModel } from '../../model/fleet';
import { memoByNode } from './common';

/**
 * Translates a SecretModel to the SDS Secret `ns/secretName`, certificate chain and key inline.
 *
 * Listeners only ever reference it by name, so a rotation updates this resource alone and drains
 * nothing.
 */
export const translateSecret = memoByNode((model: SecretModel): Secret => ({
  name: model.name,
  tls_certificate: {
    certificate_chain: { inline_string: model.certificateChain },
    private_key: { inline_string: model.privateKey },
  },
}));
