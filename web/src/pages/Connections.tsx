/** Placeholder: being written. */
export function Connections() {
  return <p>Connections</p>;
}
