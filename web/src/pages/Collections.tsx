/** Placeholder: being written. */
export function Collections() {
  return <p>Collections</p>;
}
