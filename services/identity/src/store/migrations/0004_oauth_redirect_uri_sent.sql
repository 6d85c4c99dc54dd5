-- Whether the authorization request named its redirect URI: only then must the token request repeat it
-- (RFC 6749 §4.1.3). Codes issued before this column existed always had it named.
ALTER TABLE identity.oauth_codes ADD COLUMN redirect_uri_sent boolean NOT NULL DEFAULT true;
