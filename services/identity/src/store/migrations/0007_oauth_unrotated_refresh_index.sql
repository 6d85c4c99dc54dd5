-- A rotation retires the connection's other unrotated refresh tokens. Rotated tokens stay until a day past their
-- 30-day expiry, so a connection refreshed hourly keeps hundreds of them; this index finds the (usually zero or
-- one) unrotated ones without visiting those.
CREATE INDEX oauth_tokens_unrotated_refresh ON identity.oauth_tokens (connection_id)
  WHERE kind = 'refresh' AND rotated_at IS NULL AND revoked_at IS NULL;
