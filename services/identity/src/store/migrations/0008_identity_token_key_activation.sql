-- A new identity-token key is published before it signs (docs/oauth.md, Identity tokens): it becomes the signing
-- key at activates_at, once every key set that could still be cached without it has expired. The first key
-- activates at once (no key set was ever served without it); keys made before this migration were active from
-- their creation.
ALTER TABLE identity.identity_token_keys ADD COLUMN activates_at timestamptz;
UPDATE identity.identity_token_keys SET activates_at = created_at;
ALTER TABLE identity.identity_token_keys
  ALTER COLUMN activates_at SET NOT NULL,
  ALTER COLUMN activates_at SET DEFAULT now();
