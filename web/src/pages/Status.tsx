/** Placeholder: being written. */
export function Status() {
  return <p>Status</p>;
}
