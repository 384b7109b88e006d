// Runs axe-core in headless Chromium over each URL given (one browser, one tab per
// URL) and prints one JSON line per page: {url, violations: [{id, impact, nodes}]}.
//     node axe_pages.js CHROMIUM AXE_JS URL...
// A URL is checked as served, its scripts off; one written "scripted:URL", after its
// scripts have written the page (until an element has data-state="done").
"use strict";
const fs = require("fs");
const puppeteer = require("puppeteer-core");

async function main() {
  const [chromium, axePath, ...urls] = process.argv.slice(2);
  const axeSource = fs.readFileSync(axePath, "utf8");
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run"],
  });
  try {
    for (const url of urls) {
      const page = await browser.newPage();
      const scripted = url.startsWith("scripted:");
      // the pages' own scripts would leave for the Archives: axe checks the page as served
      await page.setJavaScriptEnabled(scripted);
      // the pages' strict Content-Security-Policy would refuse axe's injected script
      await page.setBypassCSP(true);
      await page.goto(url.replace(/^scripted:/, ""), { waitUntil: "load" });
      if (scripted) await page.waitForSelector('[data-state="done"]', { timeout: 20000 });
      await page.setJavaScriptEnabled(true);
      await page.addScriptTag({ content: axeSource });
      const violations = await page.evaluate(async () => {
        const result = await window.axe.run(document, { resultTypes: ["violations"] });
        return result.violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          nodes: v.nodes.map((n) => n.target.join(" ")),
        }));
      });
      process.stdout.write(JSON.stringify({ url, violations }) + "\n");
      await page.close();
    }
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + "\n");
  process.exit(1);
});
