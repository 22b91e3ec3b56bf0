var pages = ["/news/article1.html", "/about.html"];
function go() { window.location = "/contact.html"; }
