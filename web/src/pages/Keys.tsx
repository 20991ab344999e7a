/** Placeholder: being written. */
export function Keys() {
  return <p>Keys</p>;
}
