// An inventory sync that must not overlap with itself, guarded by a flag in the process. The flag is reset on
// the happy path only: one failed pull from the supplier leaves it set, and every later sync is refused until
// the process restarts.
let syncing = false;

export async function syncInventory() {
  if (syncing) return "refused: a sync is already running";
  syncing = true; // flagged: locks/release-in-finally
  const stock = await pullSupplierStock();
  await saveStock(stock);
  syncing = false;
  return `synced ${stock.length} items`;
}

async function pullSupplierStock() {
  const response = await fetch(`${process.env.SUPPLIER_API_URL}/stock`);
  if (!response.ok) throw new Error(`supplier answered ${response.status}`);
  return response.json();
}

async function saveStock(stock) {
  const response = await fetch(`${process.env.INVENTORY_API_URL}/stock`, { method: "PUT", body: JSON.stringify(stock) });
  if (!response.ok) throw new Error(`inventory answered ${response.status}`);
}
