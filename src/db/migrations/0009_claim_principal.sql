-- Which principal made a letter's claim (`api_key:<id>` or `session:<id>`): a repeat by that same principal into the
-- same wallet gets the claim back, anyone else `409 already_claimed`. Null on claims made before this column: those
-- keep the rule they were made under (the same account into the same wallet).
ALTER TABLE "letters" ADD COLUMN "claimant_principal" text;
