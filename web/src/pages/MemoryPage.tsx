/** Placeholder: being written. */
export function MemoryPage() {
  return <p>MemoryPage</p>;
}
