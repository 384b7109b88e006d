// Where headless Chromium lands for each URL of each host: one browser per host, whose
// resolver sends the site's host to that host's port and every other host to the
// landing server; one tab per URL.  Prints one JSON line per URL:
// {host, url, final: the page's URL once it stops moving, alert: data-alert of the
// site's <main id="ibistatic"> or null, title: the page's title}.
//     node land_pages.js CHROMIUM PLAN.json
// PLAN: {site_host, landing_port, flags: [...], hosts: [{host, port, urls: [{url, want}]}]}
// `want` (the URL the answer leads to, or null for an alert) only ends the wait early:
// a page that never reaches it is reported where it stops (no move for SETTLE ms).
"use strict";
const fs = require("fs");
const puppeteer = require("puppeteer-core");

const SETTLE = 1500;
const LIMIT = 10000;
// the pages' states while their script is still resolving or leaving
const MOVING = new Set(["loading", "resolving", "redirecting", "redirect"]);

async function look(page) {
  try {
    return await page.evaluate(() => {
      const main = document.querySelector("main#ibistatic");
      return {
        alert: main ? main.getAttribute("data-alert") : null,
        state: main ? main.getAttribute("data-state") : null,
      };
    });
  } catch (error) {
    return { alert: null, state: "loading" }; // the document is being replaced
  }
}

async function visit(browser, url, want) {
  const page = await browser.newPage();
  let moved = Date.now();
  page.on("framenavigated", (frame) => {
    if (frame === page.mainFrame()) moved = Date.now();
  });
  const started = Date.now();
  try {
    await page.goto(url, { waitUntil: "load", timeout: LIMIT });
  } catch (error) {
    // a navigation the page's script started may interrupt the first load
  }
  let seen = await look(page);
  while (Date.now() - started < LIMIT) {
    seen = await look(page);
    const here = page.url();
    if (want !== null && here === want) break;
    if (want === null && seen.alert) break;
    if (Date.now() - moved > SETTLE && !MOVING.has(seen.state)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const final = page.url();
  const title = await page.title().catch(() => null);
  await page.close();
  return { url, final, alert: seen.alert, title };
}

async function main() {
  const [chromium, planPath] = process.argv.slice(2);
  const plan = JSON.parse(fs.readFileSync(planPath, "utf8"));
  for (const host of plan.hosts) {
    const rules = `MAP ${plan.site_host} 127.0.0.1:${host.port}, MAP * 127.0.0.1:${plan.landing_port}`;
    const browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: [...plan.flags, `--host-resolver-rules=${rules}`],
    });
    try {
      for (const { url, want } of host.urls) {
        const seen = await visit(browser, url, want);
        process.stdout.write(JSON.stringify({ host: host.host, ...seen }) + "\n");
      }
    } finally {
      await browser.close();
    }
  }
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + "\n");
  process.exit(1);
});
