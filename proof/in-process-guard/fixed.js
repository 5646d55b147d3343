// The same guard, reset in finally: a failed pull releases it like a successful one. (A flag in the process
// dies with the process, so in-process locks are the one case where finally is the whole answer.)
let syncing = false;

export async function syncInventory() {
  if (syncing) return "refused: a sync is already running";
  syncing = true;
  try {
    const stock = await pullSupplierStock();
    await saveStock(stock);
    return `synced ${stock.length} items`;
  } finally {
    syncing = false;
  }
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
