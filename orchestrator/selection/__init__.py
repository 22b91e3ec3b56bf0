"""The selection tool for curators (BCWeb, shared/seeds/001…, 2.1): collections of records, each a site
chosen with its budget, frequency and depth, transferred into harvest definitions."""
