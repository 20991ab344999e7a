/** Placeholder: being written. */
export function Remember() {
  return <p>Remember</p>;
}
