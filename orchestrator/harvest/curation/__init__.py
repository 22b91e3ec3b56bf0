"""What curators and engineers type in: domains created in bulk (domains), found among millions
(domainsearch), seeds pasted (seeding) and attached with a configuration to a definition (attach),
validated (validators), and the newcomer's demo harvest (demo)."""
