var pages = ["/news/article1.html", "/about.html"];
function go() { window.location = "/contact.html"; }
// A banner only a browser finds: its address is put together when the script runs, so no string literal holds
// it and no link extractor (netharvest's, Heritrix's ExtractorJS) sees it. Page QA reports it missing from
// replay; a patch crawl fetches it.
(function () {
  var slash = String.fromCharCode(47);
  var banner = new Image();
  banner.alt = "banner";
  banner.id = "js-banner";
  banner.src = slash + ["hidden", "banner"].join(slash) + "." + "png";
  document.addEventListener("DOMContentLoaded", function () { document.body.appendChild(banner); });
})();
