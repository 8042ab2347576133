/** The compiled file of the checkout (ledger/checkout.ts: at the bottom of the layout, the ledger's worker needs it too). */
export { distPath } from '../ledger/checkout.js';
