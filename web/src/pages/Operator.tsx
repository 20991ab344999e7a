/** Placeholder: being written. */
export function Operator() {
  return <p>Operator</p>;
}
