"""The harvester: one JobSpec in, WARC files, a Heritrix crawl.log, reports and a JobResult out.

Pure Python on top of Scrapy and warcio. It never imports Django and never touches the database: a
harvester machine has only the broker and a spool directory.
"""

__version__ = "0.1.0"
