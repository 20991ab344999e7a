/** Placeholder: being written. */
export function Grants() {
  return <p>Grants</p>;
}
