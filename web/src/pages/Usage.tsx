/** Placeholder: being written. */
export function Usage() {
  return <p>Usage</p>;
}
