-- In a fleet, the one node that delivers a host's webhooks ('' : any live
-- node); a loopback webhook URL needs one.
ALTER TABLE hosts ADD COLUMN delivery_node TEXT NOT NULL DEFAULT '';
