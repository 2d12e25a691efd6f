import streamlit as st

st.title("sequences")
st.write("Being built.")
