-- Keys that sign the identity tokens the MCP gateway sends to upstream servers (docs/oauth.md, Identity tokens).
-- The private JWK is stored only sealed (AES-256-GCM, the kid as associated data); the public JWK is published at
-- /.well-known/jwks.json. The current key has no retires_at; a rotated-out key keeps being published until it.
CREATE TABLE identity.identity_token_keys (
  kid text PRIMARY KEY,
  alg text NOT NULL,
  private_jwk_sealed text NOT NULL,
  public_jwk jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  retires_at timestamptz
);

-- At most one current key, whatever concurrent rotations try.
CREATE UNIQUE INDEX identity_token_keys_one_current ON identity.identity_token_keys ((true)) WHERE retires_at IS NULL;
