// The web explorer in a real browser: Debian's chromium, headless, driven
// over the DevTools protocol on a pipe (no npm package needed). It loads the
// page from tbserve, checks the shown value and moves against the API,
// plays a move by clicking it in the list and another by clicking the board,
// checks the URL holds each FEN and that reloading it shows the same
// position, checks the greyed files of Four File, and keeps screenshots.
//
//   node explorer_test.mjs --tbserve PATH --tbgen PATH --web DIR --chromium PATH --out DIR
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const key of ['tbserve', 'tbgen', 'web', 'chromium', 'out']) {
  if (!args[key]) fail(`missing --${key}`);
}

const children = [];
const scratch = mkdtempSync(join(tmpdir(), 'tbforge-web-'));
let failures = 0;
let passes = 0;
let finished = false;  // set once every check ran: children may exit then

function fail(message) {
  console.error(`explorer_test: FAILED: ${message}`);
  cleanup();
  process.exit(1);
}

function cleanup() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  try {
    rmSync(scratch, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  } catch (e) {
    console.error(`explorer_test: could not remove ${scratch}: ${e.message}`);
  }
}

function check(condition, what) {
  if (condition) {
    ++passes;
  } else {
    ++failures;
    console.error(`explorer_test: check failed: ${what}`);
  }
}

// The whole run is bounded.
const deadline = setTimeout(() => fail('timed out after 100 s'), 100_000);

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// --- the board library must have been installed (npm ci in web/) ---------
const board = join(args.web, 'chessground', 'chessground.min.js');
if (!existsSync(board)) {
  fail(`${board} is missing: the chessground board was not installed. ` +
       'Run scripts/install-deps.sh (it runs `npm ci` in web/), then rebuild.');
}
if (!existsSync(args.chromium)) fail(`no browser at ${args.chromium}: run scripts/install-deps.sh`);

// --- a small database ------------------------------------------------------
const db = join(scratch, 'db');
for (const [variant, tables] of [['antichess', ['KQvK']], ['fourfile', ['KRvK']]]) {
  const run = spawnSync(args.tbgen, ['gen', '--variant', variant, '--db', db, ...tables], { encoding: 'utf8' });
  if (run.status !== 0) fail(`tbgen failed: ${run.stderr}`);
}

// --- tbserve on a free loopback port ----------------------------------------
const server = spawn(args.tbserve, ['--db', db, '--listen', '127.0.0.1:0', '--web', args.web, '--threads', '4'],
                     { stdio: ['ignore', 'pipe', 'ignore'] });
children.push(server);
const origin = await new Promise((resolve) => {
  let text = '';
  server.stdout.on('data', (chunk) => {
    text += chunk;
    const match = text.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
    if (match) resolve(`http://127.0.0.1:${match[1]}`);
  });
  server.on('exit', () => {
    if (!finished) fail('tbserve exited before the test ended');
  });
});

async function api(variant, fen) {
  const response = await fetch(`${origin}/${variant}?fen=${fen.replace(/ /g, '_')}`);
  if (!response.ok) fail(`API ${variant} ${fen}: HTTP ${response.status}`);
  return response.json();
}

// --- chromium with the DevTools protocol on fds 3 (to it) and 4 (from it) ---
const browser = spawn(args.chromium, [
  '--headless', '--remote-debugging-pipe', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
  '--no-first-run', '--no-default-browser-check', '--disable-extensions', '--disable-background-networking',
  `--user-data-dir=${join(scratch, 'profile')}`, '--window-size=1200,900', 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
children.push(browser);
let browserLog = '';
browser.stderr.on('data', (chunk) => { browserLog = (browserLog + chunk).slice(-4000); });
browser.on('exit', (code) => {
  if (!finished) fail(`chromium exited (${code}): ${browserLog}`);
});

const toBrowser = browser.stdio[3];
const fromBrowser = browser.stdio[4];
let nextId = 1;
const pending = new Map();
let buffered = '';
fromBrowser.on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  let end;
  while ((end = buffered.indexOf('\0')) >= 0) {
    const message = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    if (message.id && pending.has(message.id)) {
      const { resolve, reject } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) reject(new Error(JSON.stringify(message.error)));
      else resolve(message.result);
    }
  }
});

function send(method, params = {}, sessionId = undefined) {
  const id = nextId++;
  const message = { id, method, params };
  if (sessionId) message.sessionId = sessionId;
  toBrowser.write(JSON.stringify(message) + '\0');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

const { targetInfos } = await send('Target.getTargets');
const pageTarget = targetInfos.find((t) => t.type === 'page');
if (!pageTarget) fail('chromium has no page');
const { sessionId } = await send('Target.attachToTarget', { targetId: pageTarget.targetId, flatten: true });
const page = (method, params) => send(method, params, sessionId);
await page('Page.enable');
await page('Runtime.enable');
await page('Emulation.setDeviceMetricsOverride', { width: 1200, height: 900, deviceScaleFactor: 1, mobile: false });

async function evaluate(expression) {
  const { result, exceptionDetails } = await page('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
  if (exceptionDetails) fail(`page script failed: ${expression}: ${JSON.stringify(exceptionDetails)}`);
  return result.value;
}

async function waitFor(expression, what, ms = 20_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await evaluate(expression)) return;
    await sleep(100);
  }
  fail(`waiting for ${what}: ${await evaluate('document.body.dataset.state + " " + document.getElementById("value").textContent')}`);
}

async function click(x, y) {
  for (const type of ['mouseMoved', 'mousePressed', 'mouseReleased']) {
    await page('Input.dispatchMouseEvent', { type, x, y, button: 'left', clickCount: 1 });
  }
}

async function screenshot(name) {
  const { data } = await page('Page.captureScreenshot', { format: 'png' });
  mkdirSync(args.out, { recursive: true });
  const path = join(args.out, name);
  writeFileSync(path, Buffer.from(data, 'base64'));
  console.log(`explorer_test: screenshot ${path}`);
}

const underscored = (fen) => fen.replace(/ /g, '_');
const moverResult = (category) => (category === 'loss' ? 'win' : category === 'win' ? 'loss' : 'draw');

// The page shows `answer`: value, board, move list in the API's order.
async function checkShown(answer, what) {
  const shown = await evaluate(`(() => ({
    value: document.getElementById('value').textContent,
    valueClass: document.getElementById('value').className,
    fen: document.getElementById('fen').value,
    turn: document.getElementById('turn').textContent,
    pieces: document.querySelectorAll('cg-board piece:not(.ghost):not(.fading)').length,
    moves: [...document.querySelectorAll('#moves li')].map((li) => ({ uci: li.dataset.uci, cls: li.className,
      text: li.textContent })),
    search: window.location.search,
  }))()`);
  check(shown.valueClass === `value ${answer.category}`, `${what}: value class ${shown.valueClass} for ${answer.category}`);
  const dtc = Math.abs(answer.dtc);
  check(answer.category === 'draw' ? shown.value === 'Draw' : shown.value.includes(dtc ? `DTC ${dtc}` : 'has won'),
        `${what}: value text "${shown.value}" for ${answer.category} ${answer.dtc}`);
  check(shown.fen === answer.fen, `${what}: FEN box "${shown.fen}"`);
  check(shown.turn === (answer.fen.split(' ')[1] === 'w' ? 'White to move' : 'Black to move'), `${what}: ${shown.turn}`);
  const units = answer.fen.split(' ')[0].replace(/[^A-Za-z]/g, '').length;
  check(shown.pieces === units, `${what}: ${shown.pieces} pieces on the board, FEN has ${units}`);
  check(shown.moves.length === answer.moves.length, `${what}: ${shown.moves.length} moves listed`);
  answer.moves.forEach((m, i) => {
    const li = shown.moves[i] || {};
    check(li.uci === m.uci, `${what}: move ${i} is ${li.uci}, API says ${m.uci}`);
    check(li.cls === moverResult(m.category), `${what}: move ${m.uci} coloured ${li.cls}`);
    check((li.text || '').startsWith(m.san), `${what}: move ${m.uci} shows "${li.text}"`);
  });
  return shown;
}

async function open(url) {
  await evaluate('document.body && (document.body.dataset.state = "navigating")');
  await page('Page.navigate', { url });
  await waitFor('document.body && document.body.dataset.state === "ready"', `page ${url}`);
}

// --- 1. load a position --------------------------------------------------------
const startFen = '8/8/8/8/8/8/8/KQ3k2 b - - 0 1';
await open(`${origin}/?variant=antichess&fen=${underscored(startFen)}`);
let answer = await api('antichess', startFen);
await checkShown(answer, 'start');

// --- 2. play the best move by clicking it in the list --------------------------
const best = answer.moves[0];
const box = await evaluate(`(() => { const r = document.querySelector('#moves li').getBoundingClientRect();
  return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; })()`);
await click(box.x, box.y);
await waitFor(`window.location.search.includes(${JSON.stringify(underscored(best.fen))}) && document.body.dataset.state === "ready"`,
              'the position after the clicked move');
answer = await api('antichess', best.fen);
let shown = await checkShown(answer, 'after the list click');
check(shown.search === `?variant=antichess&fen=${underscored(best.fen)}`, `URL after the list click: ${shown.search}`);
await screenshot('explorer-antichess.png');

// --- 3. play a move on the board: click its unit, then its destination ----------
const square = await evaluate(`(() => { const r = document.querySelector('cg-board').getBoundingClientRect();
  return { left: r.left, top: r.top, size: r.width }; })()`);
const center = (key) => ({
  x: square.left + ('abcdefgh'.indexOf(key[0]) + 0.5) * square.size / 8,
  y: square.top + (8 - Number(key[1]) + 0.5) * square.size / 8,
});
const boardMove = answer.moves[0];
const from = center(boardMove.uci.slice(0, 2));
const to = center(boardMove.uci.slice(2, 4));
await click(from.x, from.y);
await sleep(150);
await click(to.x, to.y);
await waitFor(`window.location.search.includes(${JSON.stringify(underscored(boardMove.fen))}) && document.body.dataset.state === "ready"`,
              `the position after ${boardMove.uci} on the board`);
answer = await api('antichess', boardMove.fen);
shown = await checkShown(answer, 'after the board move');

// --- 4. the URL is shareable: opening it again shows the same position ----------
await open(`${origin}/${shown.search}`);
await checkShown(answer, 'the shared URL');

// --- 5. Four File: its board with the b, d, f and h files greyed ---------------
const fourFen = '4k3/8/8/8/8/8/8/R3K3 w - - 0 1';
await open(`${origin}/?variant=fourfile&fen=${underscored(fourFen)}`);
answer = await api('fourfile', fourFen);
await checkShown(answer, 'fourfile');
const greyed = await evaluate(`[...document.querySelectorAll('cg-board square.off-board')].length`);
check(greyed === 32, `fourfile: ${greyed} greyed squares, expected 32`);
await screenshot('explorer-fourfile.png');

finished = true;
clearTimeout(deadline);
// The browser and the server stop before their files are removed.
const exited = (child) => new Promise((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) resolve();
  else child.on('exit', resolve);
});
try {
  await Promise.race([send('Browser.close'), sleep(3000)]);
} catch (e) {
  // the browser may close the pipe before answering
}
await Promise.race([exited(browser), sleep(5000)]);
server.kill('SIGTERM');
await Promise.race([exited(server), sleep(5000)]);
cleanup();
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
