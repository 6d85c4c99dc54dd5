-- A team's MCP publishing override (spec §2.13, op 13): null follows the platform default (MCP_PUBLISH_POLICY).
-- The platform team never has one (its servers are published directly); the service refuses to set it there.
ALTER TABLE identity.teams ADD COLUMN publishing_override text CHECK (publishing_override IN ('approval_required', 'self_publish'));
